"""taskcrew: an autonomous task worker."""

__version__ = "0.1.0"
