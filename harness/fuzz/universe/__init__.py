"""Fuzzing injection strategies in generated tool universes (``run_campaign``, generators).

Private modules only; the public names are re-exported from ``harness.fuzz``.
"""
