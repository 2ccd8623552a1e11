"""funes-echo: the reference integration."""
