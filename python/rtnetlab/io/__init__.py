"""Reading and writing the file formats rtnetlab speaks."""
