"""The pure workload rules against the numbers of the specification."""

import collections
import dataclasses
import datetime as dt
import random

import pytest
from tpcc_contract import tpcc
from tpcc_runner import transactions as t
from tpcc_runner import workload as w


def test_nurand_stays_in_range_and_is_non_uniform():
    r = w.TpccRandom(seed=1, constants=w.CConstants(123, 259, 7911))
    draws = [r.nurand(1023, 1, 3000, 259) for _ in range(60_000)]
    assert min(draws) >= 1 and max(draws) <= 3000
    counts = collections.Counter(draws)
    # uniform would give ~20 per id; NURand concentrates: the top 10% of ids take far more
    top = sum(n for _, n in counts.most_common(300))
    assert top > 0.2 * len(draws)


def test_nurand_formula_on_fixed_draws():
    class Fixed(w.TpccRandom):
        def __init__(self, values):
            super().__init__(0, w.CConstants(0, 0, 0))
            self.values = list(values)

        def number(self, low, high):
            return self.values.pop(0)

    # ((5 | 10) + 7) % (3000 - 1 + 1) + 1 = (15 + 7) % 3000 + 1
    assert Fixed([5, 10]).nurand(1023, 1, 3000, 7) == 23


@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_number_draws_what_randint_draws_from_the_same_stream(seed):
    """TpccRandom.number stands in for random.Random.randint on the run's hot path: the same
    values in the same order, and the stream left where randint leaves it, so a seed's inputs
    are those of every earlier version (a widths' power of two and one past it included: where
    rejection begins)."""
    ours, stock = w.TpccRandom(seed, w.CConstants(0, 0, 0)), random.Random(seed)
    ranges = [
        (1, 1),
        (0, 1),
        (1, 10),
        (1, 100),
        (5, 15),
        (0, 1023),
        (1, 3000),
        (0, 8191),
        (1, 100_000),
        (1, 1024),
        (1, 1025),
        (-5, 5),
        (100, 500_000),
        (0, 2**40),
    ]
    for _ in range(300):
        for low, high in ranges:
            assert ours.number(low, high) == stock.randint(low, high)
    assert ours.rng.random() == stock.random()


def test_number_refuses_an_empty_range_as_randint_does():
    with pytest.raises(ValueError, match="empty range"):
        w.TpccRandom(0, w.CConstants(0, 0, 0)).number(5, 4)


@pytest.mark.parametrize(
    "n,name", [(0, "BARBARBAR"), (371, "PRICALLYOUGHT"), (999, "EINGEINGEING"), (123, "OUGHTABLEPRI")]
)
def test_last_name_syllables(n, name):
    assert w.last_name(n) == name


def test_run_constant_keeps_clause_2_1_6_1_distance():
    for c_load in range(256):
        load = w.CConstants(c_load, 5, 6)
        run = w.run_constants(random.Random(c_load), load)
        assert w.valid_c_last_delta(run.c_last, c_load)
        assert abs(run.c_last - c_load) not in (96, 112)
        assert (run.c_id, run.ol_i_id) == (5, 6)


def test_parse_mix_rejects_bad_input():
    assert w.parse_mix("45,43,4,4,4") == (45, 43, 4, 4, 4)
    for bad in ("45,43,4,4", "50,43,4,4,4", "a,b,c,d,e", "-1,57,4,20,20"):
        with pytest.raises(ValueError):
            w.parse_mix(bad)


def test_mix_deck_is_exact_per_hundred_cards():
    deck = w.MixDeck(random.Random(3), (45, 43, 4, 4, 4))
    draws = collections.Counter(deck.next() for _ in range(1000))
    assert draws == {
        tpcc.NEW_ORDER: 450,
        tpcc.PAYMENT: 430,
        tpcc.ORDER_STATUS: 40,
        tpcc.DELIVERY: 40,
        tpcc.STOCK_LEVEL: 40,
    }


def _inputs(warehouses=4, home=2):
    r = w.TpccRandom(seed=11, constants=w.CConstants(100, 200, 300))
    return w.TransactionInputs(r, w.Scale(), warehouses, home, 3)


def test_new_order_inputs_follow_clause_2_4_1():
    inp = _inputs()
    orders = [inp.new_order() for _ in range(20_000)]
    assert all(5 <= len(o.items) <= 15 for o in orders)
    assert all(o.w_id == 2 and 1 <= o.d_id <= 10 for o in orders)
    rollbacks = sum(o.items[-1].i_id == 100_001 for o in orders)
    assert 0.006 < rollbacks / len(orders) < 0.014
    lines = [i for o in orders for i in o.items]
    remote = sum(i.supply_w_id != 2 for i in lines)
    assert 0.006 < remote / len(lines) < 0.014
    assert all(1 <= i.quantity <= 10 for i in lines)


def test_single_warehouse_never_goes_remote():
    inp = _inputs(warehouses=1, home=1)
    assert all(i.supply_w_id == 1 for _ in range(2000) for i in inp.new_order().items)
    assert all(p.c_w_id == 1 for p in (inp.payment() for _ in range(2000)))


def test_payment_inputs_follow_clause_2_5_1():
    inp = _inputs()
    pays = [inp.payment() for _ in range(20_000)]
    by_name = sum(p.c_last is not None for p in pays) / len(pays)
    remote = sum(p.c_w_id != p.w_id for p in pays) / len(pays)
    assert 0.58 < by_name < 0.62
    assert 0.13 < remote < 0.17
    assert all((p.c_id is None) != (p.c_last is None) for p in pays)
    assert all(1.00 <= p.h_amount <= 5000.00 for p in pays)


@pytest.mark.parametrize("line_pct, pay_pct", [(0, 0), (10, 50), (100, 100)])
def test_remote_percents_are_what_the_study_asked(line_pct, pay_pct):
    r = w.TpccRandom(seed=7, constants=w.CConstants(123, 259, 7911))
    inp = w.TransactionInputs(r, w.Scale(), 10, 2, 3, w.RemotePercents(line_pct, pay_pct))
    lines = [i for _ in range(3000) for i in inp.new_order().items]
    pays = [inp.payment() for _ in range(3000)]
    assert abs(sum(i.supply_w_id != 2 for i in lines) / len(lines) - line_pct / 100) < 0.02
    assert abs(sum(p.c_w_id != p.w_id for p in pays) / len(pays) - pay_pct / 100) < 0.03


def test_remote_percents_are_checked_and_named_as_a_deviation():
    with pytest.raises(ValueError, match="0-100"):
        w.RemotePercents(101, 15)
    assert w.RemotePercents().deviation() is None
    assert "0% and remote Payments 15%" in w.RemotePercents(0).deviation()


def test_order_status_by_last_name_sixty_percent_and_names_exist_when_scaled_down():
    r = w.TpccRandom(seed=5, constants=w.CConstants(100, 200, 300))
    inp = w.TransactionInputs(r, w.Scale(items=1000, customers_per_district=30), 1, 1, 1)
    st = [inp.order_status() for _ in range(5000)]
    assert 0.57 < sum(s.c_last is not None for s in st) / len(st) < 0.63
    existing = {w.last_name(n) for n in range(30)}
    assert {s.c_last for s in st if s.c_last} <= existing
    assert all(1 <= s.c_id <= 30 for s in st if s.c_id)


def test_stock_level_keeps_the_terminal_district_and_threshold_range():
    inp = _inputs()
    levels = [inp.stock_level() for _ in range(1000)]
    assert {s.d_id for s in levels} == {3}
    assert {s.threshold for s in levels} == set(range(10, 21))


def test_terminal_assignment_spreads_over_warehouses():
    homes = [w.terminal_assignment(c, 3, 30)[0] for c in range(30)]
    assert collections.Counter(homes) == {1: 10, 2: 10, 3: 10}
    districts = {w.terminal_assignment(c, 3, 30) for c in range(30)}
    assert len(districts) == 30  # each terminal its own (warehouse, district)
    assert w.terminal_assignment(0, 8, 2)[0] is None  # fewer clients than warehouses


def test_think_time_mean_and_truncation():
    rng = random.Random(9)
    samples = [w.think_seconds(rng, tpcc.DELIVERY) for _ in range(50_000)]
    assert max(samples) <= 50.0
    assert 4.7 < sum(samples) / len(samples) < 5.3


def test_efficiency_against_12_86_per_warehouse():
    assert tpcc.efficiency(12.86 * 10, 10) == pytest.approx(100.0)
    assert tpcc.efficiency(6.43, 1) == pytest.approx(50.0)
    assert tpcc.reported_efficiency(6.43, 1, paced=True) == (50.0, None)
    value, reason = tpcc.reported_efficiency(712441.0, 1, paced=False)
    assert value is None and "think" in reason


def _dateless(params):
    """The inputs without the current time (O_ENTRY_D, H_DATE, OL_DELIVERY_D are 'now')."""
    values = {f.name: getattr(params, f.name) for f in dataclasses.fields(params)}
    return type(params).__name__, {k: v for k, v in values.items() if not isinstance(v, dt.datetime)}


def _calls(seed, client=3, constants=w.CConstants(7, 8, 9), paced=True, n=300):
    t = w.Terminal(seed, client, constants, w.Scale(items=1000, customers_per_district=30), 4, 8, w.DEFAULT_MIX, paced)
    out = []
    for _ in range(n):
        call = t.next_call()
        out.append((call, _dateless(t.inputs(call.txn))))
    return out


def test_one_seed_reproduces_the_transaction_inputs_of_a_terminal():
    first = _calls(42)
    assert first == _calls(42)
    assert first != _calls(43) and first != _calls(42, client=4)
    # the run's C constants shape the keys drawn: a different C_LAST gives other names
    assert first != _calls(42, constants=w.CConstants(90, 8, 9))
    # pacing adds the clause 5.2.5 keying and think times; without it none
    assert {c.keying_seconds for c, _ in first} == {w.KEYING_TIME[c.txn] for c, _ in first}
    assert all(c.think_seconds == 0 == c.keying_seconds for c, _ in _calls(42, paced=False))


def test_each_type_draws_its_own_input():
    inp = _inputs()
    kinds = {txn: type(inp.draw(txn)) for txn in tpcc.TRANSACTIONS}
    assert kinds == {
        tpcc.NEW_ORDER: t.NewOrderInput,
        tpcc.PAYMENT: t.PaymentInput,
        tpcc.ORDER_STATUS: t.OrderStatusInput,
        tpcc.DELIVERY: t.DeliveryInput,
        tpcc.STOCK_LEVEL: t.StockLevelInput,
    }
    with pytest.raises(ValueError, match="no TPC-C transaction 'NEWORDER'"):
        inp.draw("NEWORDER")


def test_an_input_is_immutable_and_knows_whether_it_is_remote():
    order = t.NewOrderInput(1, 2, 3, dt.datetime(2026, 1, 1), (t.OrderLineInput(5, 1, 2), t.OrderLineInput(6, 4, 1)))
    assert order.remote and not dataclasses.replace(order, items=order.items[:1]).remote
    with pytest.raises(dataclasses.FrozenInstanceError):
        order.w_id = 4  # type: ignore[misc]
    pay = t.PaymentInput(1, 2, 1, 2, None, "BARBARBAR", 10.0, dt.datetime(2026, 1, 1))
    assert not pay.remote and dataclasses.replace(pay, c_w_id=2).remote


def test_one_seed_gives_every_pod_the_same_run_constants():
    load = w.load_constants(random.Random(42))
    assert load == w.load_constants(random.Random(42))
    runs = {w.run_constants(random.Random(42), load) for _pod in range(4)}
    assert len(runs) == 1 and w.valid_c_last_delta(runs.pop().c_last, load.c_last)


def test_response_time_verdicts_of_clause_5_2_5_3():
    v = tpcc.response_time_verdicts({tpcc.NEW_ORDER: 5.0, tpcc.PAYMENT: 5.01, tpcc.STOCK_LEVEL: 19.0})
    assert v[tpcc.NEW_ORDER]["passed"] is True and v[tpcc.PAYMENT]["passed"] is False
    assert v[tpcc.STOCK_LEVEL] == {"limit_seconds": 20.0, "p90_seconds": 19.0, "passed": True}
    assert v[tpcc.DELIVERY]["passed"] is None


# a run like the specification's (paced, 10 terminals a warehouse, full size, two hours), on VoltDB
SPEC_LIKE = dict(
    paced=True,
    mix=w.DEFAULT_MIX,
    clients=20,
    warehouses=2,
    items=100_000,
    customers_per_district=3000,
    schema_variant="stored-procedures",
    measured_seconds=7200,
)


def test_spec_deviations_name_what_the_run_did_differently():
    minimal = w.spec_deviations(**{**SPEC_LIKE, "schema_variant": "normalized"})
    assert len(minimal) == 2  # never emulated terminals; Delivery never deferred
    assert any("terminal" in d for d in minimal) and any("Delivery" in d for d in minimal)
    volt = w.spec_deviations(**SPEC_LIKE)
    assert volt[2:] == [
        "VoltDB: the district-keyed tables carry an added column *_wd = W_ID*10+D_ID "
        "(a district partition key, not in clause 1.3's layouts)"
    ]
    by_district = w.spec_deviations(**{**SPEC_LIKE, "schema_variant": "stored-procedures, partitioned by district"})
    assert by_district[2].endswith("; they are partitioned on it")
    embedded = w.spec_deviations(**{**SPEC_LIKE, "schema_variant": "embedded"})
    assert embedded[2].startswith("embedded schema: orders (with their order lines) and history kept inside")
    worst = w.spec_deviations(
        **{
            **SPEC_LIKE,
            "paced": False,
            "mix": (55, 37, 4, 2, 2),
            "clients": 4,
            "items": 5000,
            "schema_variant": "denormalized",
            "measured_seconds": 60,
        }
    )
    text = "\n".join(worst)
    for expected in (
        "think",
        "4 terminals for 2 warehouses",
        "PAYMENT 37% < 43%",
        "DELIVERY 2% < 4%",
        "5000 items",
        "denormalized",
        "60 s",
    ):
        assert expected in text, expected


def test_a_target_rate_is_named_among_the_spec_deviations():
    unpaced = {**SPEC_LIKE, "paced": False}
    paced = w.spec_deviations(**unpaced, target_tps=250)
    assert paced[0] == (
        "no keying or think times (clause 5.2.5): terminals submit at a fixed rate, 250 transactions a "
        "second over all terminals"
    )
    assert not any("back to back" in d for d in paced)
    assert w.spec_deviations(**unpaced)[0].endswith("terminals submit back to back")


def test_scale_down_divides_the_rows_per_warehouse_as_py_tpcc_scalefactor():
    """workload.scaleDown (tpcc load --scale-down): 10 gives py-tpcc's --scalefactor 10 load,
    10,000 items and 300 customers (and orders) a district, 90 of them new; 1 the specification's."""
    assert w.Scale().scaled_down(1) == w.Scale()
    tenth = w.Scale().scaled_down(10)
    assert (tenth.items, tenth.customers_per_district, tenth.orders_per_district) == (10_000, 300, 300)
    assert (tenth.new_orders_per_district, tenth.first_undelivered_o_id) == (90, 211)
    assert w.Scale(items=5, customers_per_district=5).scaled_down(100) == w.Scale(items=1, customers_per_district=1)
