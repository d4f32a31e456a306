"""Pure detector functions and small state machines: arrays in, numbers/events out, no I/O."""
