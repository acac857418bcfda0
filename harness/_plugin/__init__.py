"""The pytest plugin's parts: option table, hookspecs, check sink, fixtures and reporter.

``harness.pytest_plugin`` loads them at pytest start-up, in every pytest run of the
environment, so at load time they import only the standard library, pytest and each
other (the fixture modules also what every test run imports anyway for its settings);
everything heavier is imported inside the hook or fixture that needs it."""
