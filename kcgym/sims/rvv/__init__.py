"""The RVV accelerator (a Coral-NPU-like RV32IM + Zve32x core)."""
