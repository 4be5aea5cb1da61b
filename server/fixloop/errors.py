"""The one exception family: every error carries a one-line message a user can act on."""


class FixloopError(Exception):
    """An expected failure with a message fit for the user; faces turn it into a message and exit code."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ConfigError(FixloopError):
    """A setting has a bad value, or something required is not configured."""


class PathError(FixloopError):
    """A path is outside the project, protected (.git, secrets) or otherwise unusable."""


class ModelError(FixloopError):
    """The chat model could not be reached or answered with an error; `reason` says which, where known
    (model/endpoint.py: unreachable, key rejected, model missing)."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason


class TestRunError(FixloopError):
    """pytest could not be run, or the tests asked for do not exist."""

    __test__ = False  # not a pytest test class


class TestEnvironmentError(FixloopError):
    """The project's environment cannot give a verdict fixloop can trust (the tests import the user's real
    files instead of the shadow's): an environment problem, never the model's fault."""

    __test__ = False  # not a pytest test class


class ShadowError(FixloopError):
    """The scratch copy of the project could not be made."""


class NothingToFix(FixloopError):
    """The target tests already pass (the CLI's own exit code, 3)."""

    exit_code = 3
