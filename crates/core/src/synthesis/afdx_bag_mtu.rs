//! BAG and MTU per virtual link from the messages it carries (seed 001D, AFDX-CONF).
