"""The run's phase machine (pure: no cluster access): `dispatch.next_step` and one module per stage
(pending, deploying, loading, running, verifying, finished), beside what they share: machine.py
(the vocabulary and the Builder), generations.py, failing.py, kstatus.py, fault_moves.py,
verification.py, recording.py, sweep_cells.py. What a Step asks the timer to do is actions.py,
what a tick asks it to read reads.py."""
