"""The contract between a guide's numbered timing rules and the tests that check them.

Every rule ``**ACC-Tn**`` in a guide needs a test named ``test_acc_tn_...`` in that machine's
``test_timing_contract.py``: a rule added without a test, or a test whose rule was removed, fails.
"""

from __future__ import annotations

import re

from kcgym.sims.guide import timing_rules


def rule_tests(namespace: dict, prefix: str) -> set[str]:
    """Rule ids (``VLIW-T5``) that the ``test_vliw_t5_*`` functions of ``namespace`` claim."""
    pat = re.compile(rf"test_{prefix.lower()}_t(\d+)_")
    return {f"{prefix}-T{m.group(1)}" for name in namespace if (m := pat.match(name))}


def check_every_rule_has_a_test(sections, namespace: dict, prefix: str) -> None:
    rules = set(timing_rules(sections))
    tests = rule_tests(namespace, prefix)
    assert rules, f"no numbered timing rules found in the {prefix} guide"
    assert rules == tests, (f"rules without a test: {sorted(rules - tests)}; "
                            f"tests without a rule: {sorted(tests - rules)}")
