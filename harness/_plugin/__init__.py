"""Stdlib-only pieces of the pytest plugin: option table, hookspecs, check sink.

They are kept import-light because ``harness.pytest_plugin`` loads them at pytest start-up."""
