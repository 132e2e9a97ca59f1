"""The release's budget glue: plan a release against a budget (checked, not charged), charge
it once its draws are done, and the record and log of a release."""

from __future__ import annotations

import logging
import math
import warnings
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .._ledger import _version
from .._ledger import worker as ledger_worker
from .._random import is_secure
from .._testhooks import crash_point
from ..budget import PersistentBudget, check_budget
from ..exceptions import PrivacyLeakWarning
from .spec import ColumnPlan, SpecError, parse_spec, spec_costs
from .unit import warn_negligible_noise, whole_range_loss

_LOG = logging.getLogger("bndp")


def release_label(plans: Iterable[ColumnPlan], engine: str = "") -> str:
    """The label a release records in the budget's log."""
    text = "privatize(" + ", ".join(p.name for p in plans) + ")"
    return f"{engine} {text}" if engine else text


def plan_release(spec: Any, budget: Any = None, engine: str = "",
                 label: str | None = None, release_id: str | None = None,
                 integer_columns: Any = None) -> list[ColumnPlan]:
    """The first step of every release: validate ``spec`` and build every column's
    mechanism with scalar bounds (planned and certified), then refuse with
    :class:`bndp.BudgetError` if ``budget`` cannot account the guarantee or pay the cost,
    or with :class:`bndp.ReleaseRecorded` if ``release_id`` is already recorded under it.
    ``integer_columns``: the names of the integer-typed columns of the frame's schema
    (:func:`bndp._release.spec.parse_spec`: the integer law by default for them). Reads no
    data, draws nothing and charges nothing."""
    check_budget(budget)
    if release_id is not None and budget is None:
        raise ValueError("`release_id` needs a `budget` to record it under")
    plans = parse_spec(spec, integer_columns)
    warn_negligible_noise(plans, stacklevel=4)
    if budget is not None:
        check_budget_compatible(plans)
        budget._check_charge(spec_costs(plans),
                             release_label(plans, engine) if label is None else label,
                             release_id=release_id)
    crash_point("planned")
    return plans


_REPRODUCIBLE = ("`rng` is a reproducible generator (a seed, a SeedSequence, or a generator "
                 "bndp did not key from the OS itself)")


def seeded_release(budget: Any, rng: Any, allow_seeded: Any = False, *,
                   what: str = _REPRODUCIBLE, opt_in: str = "allow_seeded=True") -> bool:
    """Whether a release draws from a reproducible generator (``not``
    :func:`bndp._random.is_secure`: a seed, a ``SeedSequence``, or a generator bndp did not
    key from the OS itself), checked before anything is drawn or charged: whoever knows
    the seed recomputes the noise and subtracts it from the released values.

    With a persistent budget (:class:`bndp.budget.PersistentBudget`) a reproducible generator is
    refused with ``ValueError`` unless ``allow_seeded`` is True (the release is then
    recorded as seeded); with an in-memory :class:`bndp.Budget` it is allowed, with a
    :class:`bndp.PrivacyLeakWarning` unless ``allow_seeded`` is True; without a budget it
    is allowed silently (tests and research). ``what`` (the messages' subject) and
    ``opt_in`` say it in the caller's words (the command line's ``--seed`` and
    ``--allow-seeded``)."""
    if not isinstance(allow_seeded, (bool, np.bool_)):
        raise TypeError(f"`allow_seeded` must be True or False; got {allow_seeded!r}")
    seeded = not is_secure(rng)
    if not seeded or budget is None or allow_seeded:
        return seeded
    why = (f"{what}: whoever knows the seed can recompute the noise and subtract it from "
           "the released values")
    if isinstance(budget, PersistentBudget):
        raise ValueError(f"{why}; refusing to charge it to the persistent budget "
                         f"{budget.name!r}, nothing was drawn or charged. Leave the "
                         f"generator to bndp (fresh OS entropy) for a real release, or pass "
                         f"{opt_in} to record a seeded release (for tests)")
    warnings.warn(f"{why}; charged to an in-memory budget, pass {opt_in} to say that this "
                  "is intended", PrivacyLeakWarning, stacklevel=3)
    return seeded


def column_details(plans: Iterable[ColumnPlan]) -> dict[str, dict[str, Any]]:
    """What a ledger records of each released column: mechanism, sensitivity, bounds (or
    the columns of per-row bounds), mode, law (``"integer"``, ``"grid"`` or
    ``"continuous"``: :attr:`ColumnPlan.law`) and certified worst-case loss (None where it
    depends on the data: per-row bounds); and the unit of privacy:
    ``epsilon_per_sensitivity`` (the guarantee's epsilon, for a change of at most the
    sensitivity in one value) and ``whole_range_loss``, the certified loss for a change of
    one record across the column's whole range (true value ``lower`` against ``upper``:
    what protects a person's record in a per-record release), None where there is none,
    with the reason in ``whole_range_loss_note`` (:func:`bndp._release.unit.whole_range_loss`)."""
    out = {}
    for p in plans:
        if p.per_row:
            bounds: Any = f"per-row from columns {p.lower}/{p.upper}"
        else:
            bounds = [None if b is None else float(b)  # type: ignore[arg-type]
                      for b in (p.lower, p.upper)]
        loss = None
        if p.mech is not None and hasattr(p.mech, "privacy_loss"):
            try:
                loss = float(p.mech.privacy_loss())
            except (TypeError, ValueError, NotImplementedError):
                loss = None
        mode = getattr(p.mech, "mode", None) if p.mech is not None else None
        out[p.name] = {"mechanism": p.mechanism, "sensitivity": float(p.sensitivity),
                       "bounds": bounds, "mode": mode or p.options.get("mode", "exact"),
                       "law": p.law, "certified_loss": loss}
        whole, note = whole_range_loss(p)
        out[p.name].update(epsilon_per_sensitivity=float(p.cost()[0]),
                           whole_range_loss=whole, whole_range_loss_note=note)
    return out


def noise_profile(plan: ColumnPlan) -> dict[str, Any] | None:
    """The noise of a column with fixed finite bounds at the range's lower end, centre and
    upper end: the bias (mean output minus true value) and the standard deviation of the
    released value, from the law actually sampled. Public numbers (they depend on the
    parameters only). None for per-row bounds, half-lines and mechanisms without a law."""
    m = plan.mech
    if plan.per_row or m is None or not hasattr(m, "bias") or not hasattr(m, "variance"):
        return None
    lo, hi = plan.lower, plan.upper
    if not (isinstance(lo, float) and isinstance(hi, float)
            and math.isfinite(lo) and math.isfinite(hi)):
        return None
    at = [lo, 0.5 * (lo + hi), hi]
    try:
        bias = [float(m.bias(x)) for x in at]
        sd = [math.sqrt(max(float(m.variance(x)), 0.0)) for x in at]
    except (TypeError, ValueError, NotImplementedError, MemoryError):
        return None
    return {"at": at, "bias": bias, "sd": sd}


def release_record(plans: Sequence[ColumnPlan], label: str, release_id: str | None = None,
                   budget: Any = None, seeded: bool = False) -> dict[str, Any]:
    """What a release is, as a JSON-ready dict: label, id, version, ``seeded`` (whether its
    noise came from a reproducible generator, :func:`seeded_release`), and per column the
    mechanism, epsilon, delta, sensitivity, bounds, mode, certified loss and the noise's
    bias and standard deviation at the range's ends and centre (:func:`noise_profile`).
    Nothing in it depends on the private data."""
    details = column_details(plans)
    cols = {}
    for p in plans:
        eps, delta = p.cost()
        cols[p.name] = {"epsilon": eps, "delta": delta, **details[p.name],
                        "noise": noise_profile(p)}
    rec: dict[str, Any] = {"label": label, "release_id": release_id, "version": _version(),
                           "seeded": bool(seeded), "columns": cols}
    if budget is not None:
        sp, rem = budget.spent, budget.remaining
        rec["budget"] = {"epsilon": budget.epsilon, "delta": budget.delta,
                         "spent": [sp.epsilon, sp.delta],
                         "remaining": [rem.epsilon, rem.delta]}
    return rec


_CONTINUOUS = ("%s: column %r released in mode='continuous' (raw doubles of the continuous "
               "law, attackable when published; see the threat model)")


def _mode(p: ColumnPlan) -> str:
    mode = getattr(p.mech, "mode", None) if p.mech is not None else None
    return str(mode or p.options.get("mode", "exact"))


def log_release(record: dict[str, Any], budget: Any = None, charged: Any = None) -> None:
    """One INFO record on the ``bndp`` logger per release, and a WARNING for a column released
    in continuous mode (raw doubles: attackable when published). bndp prints nothing itself.

    The INFO record's message names the release, each column's settings and the budget
    charged; its attributes (``extra``, the fields a JSON log formatter writes) are
    ``bndp_release`` (``record``: :func:`release_record`), ``bndp_seeded`` (whether the
    noise came from a reproducible generator), ``bndp_budget`` (the persistent budget's
    name, ``"in-memory"`` for a :class:`bndp.Budget`, None without a budget),
    ``bndp_charge`` (``[epsilon, delta]`` charged to it, ``charged``, the cost the budget
    returned; None without a budget) and ``bndp_remaining`` (``[epsilon, delta]`` left in
    it, read right after the charge; None without a budget, or if it could not be read).
    Only public numbers: settings and budget amounts, never a value of the data."""
    if not _LOG.isEnabledFor(logging.WARNING):
        return
    parts = []
    for name, c in record["columns"].items():
        lo_hi = c["bounds"] if isinstance(c["bounds"], str) else "[{}, {}]".format(
            *("-inf" if b is None and k == 0 else "inf" if b is None else f"{b:g}"
              for k, b in enumerate(c["bounds"])))
        parts.append(f"{name}: {c['mechanism']} epsilon={c['epsilon']:g} delta={c['delta']:g} "
                     f"sensitivity={c['sensitivity']:g} bounds={lo_hi} mode={c['mode']}")
        if c["mode"] == "continuous":
            _LOG.warning(_CONTINUOUS, record["label"], name)
    rid = f" id={record['release_id']}" if record.get("release_id") else ""
    rid += " from a seeded (reproducible) generator" if record.get("seeded") else ""
    fields = _budget_fields(budget, charged)
    _LOG.info("released %s%s: %s; %s", record["label"], rid, "; ".join(parts),
              _budget_text(fields), extra={"bndp_release": record,
                                           "bndp_seeded": bool(record.get("seeded")), **fields})


def _budget_fields(budget: Any, charged: Any) -> dict[str, Any]:
    """The budget's attributes of a release's log record (:func:`log_release`)."""
    if budget is None:
        return {"bndp_budget": None, "bndp_charge": None, "bndp_remaining": None}
    try:
        rem = budget.remaining
        remaining: list[float] | None = [float(rem[0]), float(rem[1])]
    except Exception:   # noqa: BLE001 - the charge is committed: the log goes without it
        remaining = None
    return {"bndp_budget": budget.name if isinstance(budget, PersistentBudget)
            else "in-memory",
            "bndp_charge": None if charged is None else [float(charged[0]), float(charged[1])],
            "bndp_remaining": remaining}


def _budget_text(fields: dict[str, Any]) -> str:
    """The budget's part of a release's log message: ``charged to budget 'nightly':
    epsilon=0.25 delta=0, remaining epsilon=0.75 delta=0``."""
    name = fields["bndp_budget"]
    if name is None:
        return "no budget charged"
    text = ("charged to an in-memory budget" if name == "in-memory" else
            f"charged to budget {name!r}")
    if fields["bndp_charge"] is not None:
        text += ": epsilon={:g} delta={:g}".format(*fields["bndp_charge"])
    rem = fields["bndp_remaining"]
    return text + (", remaining unknown (not read)" if rem is None else
                   ", remaining epsilon={:g} delta={:g}".format(*rem))


def charge_release(budget: Any, plans: Iterable[ColumnPlan], label: str,
                   release_id: str | None = None,
                   while_charging: Callable[[], Any] | None = None,
                   seeded: bool = False) -> Any:
    """Charge a release to ``budget`` (None: nothing to do): the last step, once every
    mechanism is planned and every column drawn, right before the result is handed back
    (or, on the command line, put in place). Raises :class:`bndp.BudgetError` (spending
    nothing) if another release spent the budget since :func:`plan_release` checked it, or
    :class:`bndp.ReleaseRecorded` if another release recorded ``release_id`` since. A
    :class:`bndp.budget.PersistentBudget` commits the charge in its store before this returns.

    ``while_charging``: the last step of building the result from values already drawn
    (for frames, the new frame put together), called here and its result returned. With a
    persistent budget the charge runs meanwhile on the ledger's thread
    (:func:`bndp._ledger.worker`; its commit, the store's flush to disk or the server's
    round trip, is most of its time and runs without the GIL). Nothing is returned before
    the charge is committed, and a refused or failed charge discards the result. The step
    draws nothing and reads no data (it can fail only for lack of memory, in which case
    the charge, if committed, stands: a release is never under-counted).

    ``seeded``: the release drew from a reproducible generator (:func:`seeded_release`);
    recorded with every column in a persistent budget's ledger (``"seeded"`` in the
    details, :attr:`bndp.LedgerEntry.seeded`) and in the log record (:func:`log_release`,
    with the budget's name, the cost charged and what remains).

    Returns ``while_charging``'s result; without ``while_charging``, the
    :class:`bndp.budget.Cost` charged (None without a budget)."""
    plans = list(plans)
    crash_point("drawn")
    result = cost = None
    if isinstance(budget, PersistentBudget) and while_charging is not None:
        costs, details = spec_costs(plans), _ledger_details(plans, seeded)
        charged = ledger_worker().submit(budget.charge, costs, label=label,
                                         release_id=release_id, details=details)
        try:
            result = while_charging()
        finally:
            cost = charged.result()  # waits for the commit; raises a refusal or a failure
    else:
        if while_charging is not None:
            result = while_charging()
        if budget is not None:
            cost = budget.charge(spec_costs(plans), label=label, release_id=release_id,
                                 details=_ledger_details(plans, seeded))
    crash_point("charged")
    if _LOG.isEnabledFor(logging.INFO):
        log_release(release_record(plans, label, release_id, seeded=seeded), budget, cost)
    elif _LOG.isEnabledFor(logging.WARNING):       # (the common default: warnings only)
        for p in plans:
            if _mode(p) == "continuous":
                _LOG.warning(_CONTINUOUS, label, p.name)
    return result if while_charging is not None else cost


def _ledger_details(plans: Iterable[ColumnPlan], seeded: bool) -> dict[str, dict[str, Any]]:
    """:func:`column_details`, each column also saying whether the release was seeded."""
    return {name: {**d, "seeded": bool(seeded)} for name, d in column_details(plans).items()}


def check_budget_compatible(plans: Iterable[ColumnPlan]) -> None:
    """A budget accounts (epsilon, delta)-DP only: refuse the metric guarantee."""
    for p in plans:
        if p.mechanism == "constrained_laplace" and getattr(p.mech, "guarantee", "dp") != "dp":
            raise SpecError(column=p.name, key="guarantee", detail=(
                "the metric guarantee is not "
                "(epsilon, delta)-DP and cannot be charged to a Budget"))
