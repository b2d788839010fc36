"""Reference data: the table reader with its checks, the accelerator catalog and the price look-up."""
import importlib


def __getattr__(name):
    # a submodule on first use (``workbench.reference.<module>``), as an import statement would
    try:
        value = importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError as error:
        if error.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value
