"""The static memory plan: values alive at the same step never share a slot."""

from hypothesis import given
from hypothesis import strategies as st

from fusion_compiler.lowering.memory_plan import Lifetime, plan_memory


def test_chain_reuses_two_slots():
    # a -> b -> c -> d: each value dies when the next one is written.
    values = [Lifetime(16, step, step + 1) for step in range(4)]
    plan = plan_memory(values)
    assert plan.slot_of == (0, 1, 0, 1)
    assert plan.slot_sizes == (16, 16)


def test_inputs_and_outputs_of_one_step_never_share():
    # b is written at the step that reads a for the last time.
    plan = plan_memory([Lifetime(8, 0, 1), Lifetime(8, 1, 2)])
    assert plan.slot_of[0] != plan.slot_of[1]


def test_best_fit_then_growth():
    values = [Lifetime(100, 0, 1), Lifetime(10, 0, 1), Lifetime(10, 2, 3), Lifetime(200, 2, 3)]
    plan = plan_memory(values)
    assert plan.slot_of[2] == plan.slot_of[1]  # the small slot fits the small value
    assert plan.slot_of[3] == plan.slot_of[0]  # the big slot grows
    assert plan.slot_sizes == (200, 10)


@given(st.lists(st.tuples(st.integers(1, 64), st.integers(0, 20), st.integers(0, 10)), max_size=40))
def test_no_overlap(raw):
    values = [Lifetime(size, start, start + length) for size, start, length in raw]
    plan = plan_memory(values)
    for i, a in enumerate(values):
        assert plan.slot_sizes[plan.slot_of[i]] >= a.size
        for j in range(i + 1, len(values)):
            b = values[j]
            overlap = a.defined <= b.last_use and b.defined <= a.last_use
            if overlap:
                assert plan.slot_of[i] != plan.slot_of[j]
