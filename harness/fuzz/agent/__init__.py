"""Fuzzing a user's agent: the fuzzer plays the model (``fuzz_agent``, ``agent_runs``).

Private modules only; the public names are re-exported from ``harness.fuzz``.
"""
