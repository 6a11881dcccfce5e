"""Ray as examiner starts it: a local instance bound to 127.0.0.1 (Ray otherwise swaps loopback for the
machine's outward address), no dashboard, and nothing of Ray's own logging or its workers' output on the
terminal; joining a cluster keeps Ray's addressing."""

from __future__ import annotations

import inspect
import os
import signal

import pytest

from examiner.exam.ray_local import CLUSTER_MODE_ENV, LOOPBACK, init_options, ray_session


def test_the_options_fit_the_installed_ray_init() -> None:
    ray = pytest.importorskip("ray", reason="the `ray` extra is not installed")
    local, cluster = init_options(""), init_options("auto")
    assert local["_node_ip_address"] == LOOPBACK and "_node_ip_address" not in cluster
    for options in (local, cluster):
        assert options["include_dashboard"] is False and options["log_to_driver"] is False
        inspect.signature(ray.init).bind(**options)  # every name is one ray.init takes


def test_a_local_instance_listens_on_loopback_only_and_stays_quiet(capfd: pytest.CaptureFixture[str]) -> None:
    ray = pytest.importorskip("ray", reason="the `ray` extra is not installed")
    if ray.is_initialized():
        pytest.skip("Ray is already running in this process")
    from ray._private import ray_constants

    before = ray_constants.ENABLE_RAY_CLUSTER
    with ray_session(ray, num_cpus=1, object_store_memory=80 * 1024 * 1024):
        nodes = ray.nodes()

        @ray.remote
        def chatty() -> int:
            print("a line from a Ray worker")
            return 1

        assert ray.get(chatty.remote()) == 1
    assert not ray.is_initialized()
    assert [n["NodeManagerAddress"] for n in nodes] == [LOOPBACK]
    assert ray_constants.ENABLE_RAY_CLUSTER == before and CLUSTER_MODE_ENV not in os.environ
    captured = capfd.readouterr()
    both = captured.out + captured.err
    assert "a line from a Ray worker" not in both and "WARNING" not in both and "Started a local Ray" not in both


def test_examiners_sigterm_handler_survives_ray_init() -> None:
    """ray.init installs a SIGTERM handler that exits at once; a session puts back the one it found, so a
    stop during a Ray-prepared exam still unwinds as examiner's stop handling says (exit 143)."""

    def ours(signum: int, frame: object) -> None:
        pass

    class FakeRay:
        def is_initialized(self) -> bool:
            return False

        def init(self, **options: object) -> None:
            signal.signal(signal.SIGTERM, lambda signum, frame: None)  # what Ray's driver does

        def shutdown(self) -> None:
            pass

    before = signal.signal(signal.SIGTERM, ours)
    try:
        with ray_session(FakeRay()):
            assert signal.getsignal(signal.SIGTERM) is ours
        assert signal.getsignal(signal.SIGTERM) is ours
    finally:
        signal.signal(signal.SIGTERM, before)
