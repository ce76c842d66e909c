"""The ACID tests of TPC-C clause 3 (`tpcc acid`: atomicity, the nine isolation tests, and the
consistency conditions read during transactions): clause3.py says what each test does and
judges what was observed; mongodb.py and voltdb.py hold transactions open part-way on their
database and fetch the values; interleave.py runs a transaction while another is held;
command.py is the command."""
