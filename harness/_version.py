"""The package version (one place; ``harness.__version__`` re-exports it)."""

__version__ = "0.2.0"
