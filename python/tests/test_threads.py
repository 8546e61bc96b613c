"""Concurrent runs from Python threads: Plan.run keeps one context per thread; a shared
context serializes its callers; closing waits for runs in progress."""

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import qrt


def _inputs(m: qrt.Model, count: int):
    rng = np.random.default_rng(5)
    return [rng.integers(-128, 128, size=m.inputs[0].shape, dtype=np.int8) for _ in range(count)]


def test_concurrent_plan_runs_match_serial_runs(models):
    m = qrt.Model(models / "tflite-micro" / "person_detect.tflite")
    plan = m.compile(threads=2)
    inputs = _inputs(m, 24)
    name = plan.outputs[0].name
    serial = [plan.run(x)[name] for x in inputs]
    with ThreadPoolExecutor(max_workers=6) as pool:
        for _ in range(3):
            parallel = list(pool.map(lambda x: plan.run(x)[name], inputs))
            for want, got in zip(serial, parallel):
                np.testing.assert_array_equal(got, want)


def test_each_thread_gets_its_own_context(models):
    m = qrt.Model(models / "tflite-micro" / "person_detect.tflite")
    plan = m.compile()
    x = _inputs(m, 1)[0]
    seen = []

    def worker():
        plan.run(x)
        seen.append(plan._local.context)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(c) for c in seen}) == 4


def test_one_context_shared_by_threads_serializes(models):
    m = qrt.Model(models / "tflite-micro" / "person_detect.tflite")
    plan = m.compile()
    inputs = _inputs(m, 12)
    name = plan.outputs[0].name
    serial = [plan.run(x)[name] for x in inputs]
    with plan.create_context() as context:
        with ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(lambda x: context.run(x)[name], inputs))
    for want, got in zip(serial, results):
        np.testing.assert_array_equal(got, want)


def test_closing_a_plan_while_threads_run(models):
    m = qrt.Model(models / "tflite-micro" / "person_detect.tflite")
    plan = m.compile()
    x = _inputs(m, 1)[0]
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
    while len(runs) < 6:
        pass
    plan.close()
    stop.set()
    for t in threads:
        t.join()
    assert all("closed" in e.message for e in errors)
