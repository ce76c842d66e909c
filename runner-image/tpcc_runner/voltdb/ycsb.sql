-- YCSB's table for VoltDB, applied by the runner's YCSB store (tpcc_runner/ycsb/voltdb.py) through
-- @AdHoc: one row per field of a record, partitioned on the key so that a record's fields share a
-- partition and a single-record operation is a single-partition procedure. Values are
-- VARBINARY(65536) (a fieldlength beyond is refused before the load).
-- One statement per entry, separated by ';' at line end.

CREATE TABLE usertable (
  ycsb_key VARCHAR(255) NOT NULL, field VARCHAR(64) NOT NULL, field_value VARBINARY(65536),
  PRIMARY KEY (ycsb_key, field));
PARTITION TABLE usertable ON COLUMN ycsb_key;

CREATE PROCEDURE YcsbRead PARTITION ON TABLE usertable COLUMN ycsb_key PARAMETER 0 AS
  SELECT field, field_value FROM usertable WHERE ycsb_key = ? ORDER BY field;
CREATE PROCEDURE YcsbScan AS
  SELECT ycsb_key, field, field_value FROM usertable WHERE ycsb_key >= ? ORDER BY ycsb_key, field LIMIT ?;
CREATE PROCEDURE PARTITION ON TABLE usertable COLUMN ycsb_key PARAMETER 0 FROM CLASS tpcc.ycsb.YcsbInsert;
CREATE PROCEDURE PARTITION ON TABLE usertable COLUMN ycsb_key PARAMETER 0 FROM CLASS tpcc.ycsb.YcsbUpdate;
CREATE PROCEDURE PARTITION ON TABLE usertable COLUMN ycsb_key PARAMETER 0 FROM CLASS tpcc.ycsb.YcsbUpsert;
CREATE PROCEDURE FROM CLASS tpcc.ycsb.YcsbTransaction;
