"""Errors a user can act on (bad database file, port in use); the message says what to do."""


class ErpError(RuntimeError):
    pass
