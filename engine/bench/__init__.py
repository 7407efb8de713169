"""Benchmark drivers: they read the study registry and write docs/benchmarks/ tables with raw JSON."""
