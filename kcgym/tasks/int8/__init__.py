"""The int8 task family: the paper's Coral task set, exact integer references (``numerics = "int8"``).

Same task names as the bf16 family; int8 tensors (int32 biases and exp table), int32
accumulation, documented requantisation, nonlinear functions exact in integer arithmetic or
through lookup tables supplied in memory, and an exact-match tolerance. The table of this
family is ``kcgym.tasks.tasks_for("int8")``, built from the manifest's ``int8`` variants.
"""
