"""Worst-case analysis helpers the engine calls back: the linear-programming solver of fifo-lp."""
