"""A Ray cluster as the place where runs execute (`polycc sweep --executor ray`).

`RayExecutor()` starts a Ray instance on this machine; `RayExecutor(address)` joins a running
cluster (`ray start --head` on one machine, `ray start --address HEAD:6379` on the others). Each
item becomes one Ray task of `num_cpus_per_run` CPUs, submitted a few ahead of the cluster's
free CPUs and yielded as it finishes. Workers may run on other machines: an executor with
`remote = True` is handed functions whose results carry their files as data
(`polycc.tasks.execute_packed`), and the driver writes them where it was asked.

Ray is an optional dependency (`pip install "polycc[ray]"`); without it the constructor raises
`RayUnavailable`, which names the install command.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: What installs Ray alongside polycc.
RAY_INSTALL = 'pip install "polycc[ray]"'


class RayUnavailable(ImportError):
    """Ray is not installed."""


def _ray() -> Any:
    try:
        import ray
    except ImportError as e:
        raise RayUnavailable(f"the Ray executor needs Ray, which is not installed: {RAY_INSTALL}") from e
    return ray


def _lost_worker_errors(ray: Any) -> tuple[type[BaseException], ...]:
    """Ray's exceptions for a task that did not finish because its worker or node went away (as
    opposed to the task function raising, which Ray reports as `RayTaskError`)."""
    names = ("WorkerCrashedError", "NodeDiedError", "ObjectLostError", "OwnerDiedError", "RaySystemError")
    return tuple(getattr(ray.exceptions, n) for n in names if hasattr(ray.exceptions, n))


class RayExecutor:
    """Runs items as Ray tasks; see the module's documentation."""

    #: Workers may not share the driver's disk: results must travel back as data.
    remote = True

    def __init__(
        self, address: str | None = None, num_cpus_per_run: float = 1.0, *, num_cpus: int | None = None
    ) -> None:
        """`address`: a cluster to join (None: start Ray on this machine, with `num_cpus` CPUs,
        default all). `num_cpus_per_run`: CPUs Ray reserves for each run."""
        if not (
            isinstance(num_cpus_per_run, int | float)
            and math.isfinite(num_cpus_per_run)
            and num_cpus_per_run > 0
        ):
            raise ValueError(f"num_cpus_per_run: {num_cpus_per_run!r}; give a positive number of CPUs")
        _ray()
        self.address = address
        self.num_cpus_per_run = float(num_cpus_per_run)
        self._num_cpus = num_cpus
        self._owns_ray = False
        self._start()

    def _start(self) -> None:
        """Starts or joins Ray unless this process is already connected to it."""
        ray = _ray()
        if not ray.is_initialized():
            ray.init(
                address=self.address,
                num_cpus=self._num_cpus if self.address is None else None,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
            self._owns_ray = True

    def parallelism(self) -> int:
        """Runs the cluster can hold at once."""
        cpus = float(_ray().cluster_resources().get("CPU", 1.0))
        return max(1, int(cpus // self.num_cpus_per_run))

    def map_unordered(
        self,
        fn: Callable[[T], R],
        items: Sequence[T],
        on_lost: Callable[[T, BaseException], R] | None = None,
    ) -> Iterator[R]:
        """Yields `fn(item)` for every item as its task finishes. An exception raised by `fn` is
        re-raised here; a task whose worker or node was lost yields `on_lost(item, error)` (or
        raises, without `on_lost`). Closing the iterator cancels the tasks not yet finished."""
        if not items:
            return
        self._start()
        ray = _ray()
        lost = _lost_worker_errors(ray)
        task = ray.remote(num_cpus=self.num_cpus_per_run, max_retries=0)(fn)
        ahead = 2 * self.parallelism()
        queue = iter(items)
        pending: dict[Any, T] = {}
        try:
            for item in queue:
                pending[task.remote(item)] = item
                if len(pending) >= ahead:
                    break
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    item = pending.pop(ref)
                    try:
                        result = ray.get(ref)
                    except ray.exceptions.RayTaskError as e:
                        raise e.as_instanceof_cause() from None
                    except lost as e:
                        if on_lost is None:
                            raise
                        result = on_lost(item, e)
                    yield result
                    nxt = next(queue, None)
                    if nxt is not None:
                        pending[task.remote(nxt)] = nxt
        finally:
            if pending and self._owns_ray:
                # Stopping the instance this executor started kills its workers. Cancelling
                # instead races with the replies of tasks finishing at that moment, which aborts
                # the driver in Ray's core worker ("Tried to complete task that was not pending",
                # ray-project/ray#54798); the next call starts a fresh instance.
                self.shutdown()
            else:
                for ref in pending:
                    ray.cancel(ref, force=True)

    def shutdown(self) -> None:
        """Stops the Ray instance this executor started (a joined cluster stays up)."""
        if self._owns_ray:
            _ray().shutdown()
            self._owns_ray = False

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
