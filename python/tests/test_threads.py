"""Concurrent runs from Python threads: Plan.run keeps one context per thread; a shared
context serializes its callers; closing waits for runs in progress."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import qrt


@pytest.fixture
def detector(models):
    """person_detect's plan, 24 random inputs and their outputs from serial runs."""
    m = qrt.Model(models / "tflite-micro" / "person_detect.tflite")
    plan = m.compile(threads=2)
    rng = np.random.default_rng(5)
    inputs = [rng.integers(-128, 128, size=m.inputs[0].shape, dtype=np.int8) for _ in range(24)]
    name = plan.outputs[0].name
    return plan, inputs, name, [plan.run(x)[name] for x in inputs]


def test_concurrent_plan_runs_match_serial_runs(detector):
    plan, inputs, name, serial = detector
    with ThreadPoolExecutor(max_workers=6) as pool:
        for _ in range(3):
            parallel = list(pool.map(lambda x: plan.run(x)[name], inputs))
            for want, got in zip(serial, parallel):
                np.testing.assert_array_equal(got, want)


def test_each_thread_gets_its_own_context(detector):
    plan, inputs, _, _ = detector
    seen = []

    def worker():
        plan.run(inputs[0])
        seen.append(plan._local.context)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(c) for c in seen}) == 4


def test_one_context_shared_by_threads_serializes(detector):
    plan, inputs, name, serial = detector
    with plan.create_context() as context:
        with ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(lambda x: context.run(x)[name], inputs))
    for want, got in zip(serial, results):
        np.testing.assert_array_equal(got, want)


def test_closing_a_plan_while_threads_run(detector):
    plan, inputs, _, _ = detector
    x = inputs[0]
    errors, runs = [], []
    stop = threading.Event()

    def worker():
        while not stop.is_set():
            try:
                runs.append(plan.run(x))
            except qrt.InvalidArgumentError as e:  # the plan was closed under us: a clean error
                errors.append(e)
                return

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 60
    while len(runs) < 6 and not errors and time.monotonic() < deadline:
        time.sleep(0.001)
    assert len(runs) >= 6, f"the threads ran {len(runs)} times before closing: {errors}"
    plan.close()
    stop.set()
    for t in threads:
        t.join()
    assert all("closed" in e.message for e in errors)
    with pytest.raises(qrt.InvalidArgumentError, match="closed"):
        plan.run(x)
