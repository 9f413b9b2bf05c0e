"""User-facing errors: the CLI prints one line and exits with code 2."""


class LsbenchError(Exception):
    """A problem with the user's input (file, field, option); never a bug in lsbench."""


class InstanceFormatError(LsbenchError):
    def __init__(self, path, message):
        super().__init__(f"{path}: {message}")
