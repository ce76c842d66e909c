-- TPC-C schema for VoltDB (clause 1.3), applied by the runner's driver through @AdHoc.
-- Two layouts (driver option partitioning): "warehouse" (default) partitions every table but
-- ITEM on its warehouse id, so each transaction of a home warehouse runs in one partition;
-- "district" partitions the district-keyed tables (DISTRICT, CUSTOMER, HISTORY, ORDERS,
-- NEW-ORDER, ORDER-LINE) on a district key *_wd = W_ID * 10 + D_ID (VoltDB partitions on one
-- column), WAREHOUSE and STOCK staying on their warehouse id. ITEM is replicated in both.
-- The *_wd columns exist in both layouts (VoltDB plans every statement of a procedure when it
-- is created, so the procedures' SQL is one), ending each primary key they are in (a
-- partitioned table's unique keys must hold its partition column); every writer sets them.
-- A statement after a line "-- layout: X" belongs to layout X only.
-- Money is DECIMAL (exact; the procedures round computed amounts to cents with BigDecimal);
-- tax and discount rates stay FLOAT (they only scale the returned NewOrder total). Timestamps are UTC.
-- One statement per entry, separated by ';' at line end: the driver creates only the
-- tables and procedures that are missing.

CREATE TABLE warehouse (
  w_id INTEGER NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), w_street_2 VARCHAR(20),
  w_city VARCHAR(20), w_state VARCHAR(2), w_zip VARCHAR(9), w_tax FLOAT, w_ytd DECIMAL,
  PRIMARY KEY (w_id));
PARTITION TABLE warehouse ON COLUMN w_id;

CREATE TABLE district (
  d_id INTEGER NOT NULL, d_w_id INTEGER NOT NULL, d_name VARCHAR(10), d_street_1 VARCHAR(20),
  d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state VARCHAR(2), d_zip VARCHAR(9),
  d_tax FLOAT, d_ytd DECIMAL, d_next_o_id INTEGER, d_wd INTEGER NOT NULL,
  PRIMARY KEY (d_w_id, d_id, d_wd));
-- layout: warehouse
PARTITION TABLE district ON COLUMN d_w_id;
-- layout: district
PARTITION TABLE district ON COLUMN d_wd;

CREATE TABLE customer (
  c_id INTEGER NOT NULL, c_d_id INTEGER NOT NULL, c_w_id INTEGER NOT NULL,
  c_first VARCHAR(16), c_middle VARCHAR(2), c_last VARCHAR(16), c_street_1 VARCHAR(20),
  c_street_2 VARCHAR(20), c_city VARCHAR(20), c_state VARCHAR(2), c_zip VARCHAR(9),
  c_phone VARCHAR(16), c_since TIMESTAMP, c_credit VARCHAR(2), c_credit_lim DECIMAL,
  c_discount FLOAT, c_balance DECIMAL, c_ytd_payment DECIMAL, c_payment_cnt INTEGER,
  c_delivery_cnt INTEGER, c_data VARCHAR(500), c_wd INTEGER NOT NULL,
  PRIMARY KEY (c_w_id, c_d_id, c_id, c_wd));
-- layout: warehouse
PARTITION TABLE customer ON COLUMN c_w_id;
-- layout: district
PARTITION TABLE customer ON COLUMN c_wd;
CREATE INDEX customer_by_name ON customer (c_w_id, c_d_id, c_last, c_first);

-- No primary key (clause 1.3.1); partitioned on the paying (home) warehouse (or district),
-- which is where Payment writes it. The index serves the per-customer sums of the consistency checks
-- and the delete that makes reloading a district idempotent.
CREATE TABLE history (
  h_c_id INTEGER, h_c_d_id INTEGER, h_c_w_id INTEGER, h_d_id INTEGER, h_w_id INTEGER NOT NULL,
  h_date TIMESTAMP, h_amount DECIMAL, h_data VARCHAR(24), h_wd INTEGER NOT NULL);
-- layout: warehouse
PARTITION TABLE history ON COLUMN h_w_id;
-- layout: district
PARTITION TABLE history ON COLUMN h_wd;
CREATE INDEX history_by_customer ON history (h_c_w_id, h_c_d_id, h_c_id);

CREATE TABLE new_order (
  no_o_id INTEGER NOT NULL, no_d_id INTEGER NOT NULL, no_w_id INTEGER NOT NULL, no_wd INTEGER NOT NULL,
  PRIMARY KEY (no_w_id, no_d_id, no_o_id, no_wd));
-- layout: warehouse
PARTITION TABLE new_order ON COLUMN no_w_id;
-- layout: district
PARTITION TABLE new_order ON COLUMN no_wd;

CREATE TABLE orders (
  o_id INTEGER NOT NULL, o_d_id INTEGER NOT NULL, o_w_id INTEGER NOT NULL, o_c_id INTEGER,
  o_entry_d TIMESTAMP, o_carrier_id INTEGER, o_ol_cnt INTEGER, o_all_local INTEGER, o_wd INTEGER NOT NULL,
  PRIMARY KEY (o_w_id, o_d_id, o_id, o_wd));
-- layout: warehouse
PARTITION TABLE orders ON COLUMN o_w_id;
-- layout: district
PARTITION TABLE orders ON COLUMN o_wd;
CREATE INDEX orders_by_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);

CREATE TABLE order_line (
  ol_o_id INTEGER NOT NULL, ol_d_id INTEGER NOT NULL, ol_w_id INTEGER NOT NULL,
  ol_number INTEGER NOT NULL, ol_i_id INTEGER, ol_supply_w_id INTEGER, ol_delivery_d TIMESTAMP,
  ol_quantity INTEGER, ol_amount DECIMAL, ol_dist_info VARCHAR(24), ol_wd INTEGER NOT NULL,
  PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number, ol_wd));
-- layout: warehouse
PARTITION TABLE order_line ON COLUMN ol_w_id;
-- layout: district
PARTITION TABLE order_line ON COLUMN ol_wd;

CREATE TABLE item (
  i_id INTEGER NOT NULL, i_im_id INTEGER, i_name VARCHAR(24), i_price DECIMAL, i_data VARCHAR(50),
  PRIMARY KEY (i_id));

CREATE TABLE stock (
  s_i_id INTEGER NOT NULL, s_w_id INTEGER NOT NULL, s_quantity INTEGER,
  s_dist_01 VARCHAR(24), s_dist_02 VARCHAR(24), s_dist_03 VARCHAR(24), s_dist_04 VARCHAR(24),
  s_dist_05 VARCHAR(24), s_dist_06 VARCHAR(24), s_dist_07 VARCHAR(24), s_dist_08 VARCHAR(24),
  s_dist_09 VARCHAR(24), s_dist_10 VARCHAR(24), s_ytd INTEGER, s_order_cnt INTEGER,
  s_remote_cnt INTEGER, s_data VARCHAR(50),
  PRIMARY KEY (s_w_id, s_i_id));
PARTITION TABLE stock ON COLUMN s_w_id;

-- The runner's bookkeeping: the LoadMeta document, and the load units already loaded
-- (written in the same transaction as the unit's rows; ITEM units use w_id 0).
CREATE TABLE tpcc_meta (
  meta_key VARCHAR(32) NOT NULL, meta_json VARCHAR(4096), PRIMARY KEY (meta_key));
CREATE TABLE tpcc_load_unit (
  w_id INTEGER NOT NULL, unit_key VARCHAR(64) NOT NULL, PRIMARY KEY (w_id, unit_key));
PARTITION TABLE tpcc_load_unit ON COLUMN w_id;

-- The five transactions. Warehouse layout: single-partition on the home warehouse; the *MP
-- variants run the same code as one multi-partition transaction when a remote warehouse is
-- touched. District layout: OrderStatus and DeliveryDistrict are single-partition on the
-- district key (their first parameter); NewOrder and Payment always run as NewOrderMP and
-- PaymentMP (WAREHOUSE and STOCK are in other partitions than the district's rows), StockLevel
-- (STOCK), the whole-warehouse Delivery (ten districts) and the warehouse and district load
-- units (DISTRICT rows; the load marker is per warehouse) are multi-partition.
-- layout: warehouse
CREATE PROCEDURE PARTITION ON TABLE warehouse COLUMN w_id PARAMETER 0 FROM CLASS tpcc.procedures.NewOrder;
CREATE PROCEDURE FROM CLASS tpcc.procedures.NewOrderMP;
-- layout: warehouse
CREATE PROCEDURE PARTITION ON TABLE warehouse COLUMN w_id PARAMETER 0 FROM CLASS tpcc.procedures.Payment;
CREATE PROCEDURE FROM CLASS tpcc.procedures.PaymentMP;
-- layout: warehouse
CREATE PROCEDURE PARTITION ON TABLE warehouse COLUMN w_id PARAMETER 0 FROM CLASS tpcc.procedures.OrderStatus;
-- layout: district
CREATE PROCEDURE PARTITION ON TABLE customer COLUMN c_wd PARAMETER 0 FROM CLASS tpcc.procedures.OrderStatus;
-- layout: warehouse
CREATE PROCEDURE PARTITION ON TABLE warehouse COLUMN w_id PARAMETER 0 FROM CLASS tpcc.procedures.Delivery;
-- layout: district
CREATE PROCEDURE FROM CLASS tpcc.procedures.Delivery;
-- Delivery one district per transaction (driver option delivery=per-district).
-- layout: warehouse
CREATE PROCEDURE PARTITION ON TABLE warehouse COLUMN w_id PARAMETER 0 FROM CLASS tpcc.procedures.DeliveryDistrict;
-- layout: district
CREATE PROCEDURE PARTITION ON TABLE new_order COLUMN no_wd PARAMETER 0 FROM CLASS tpcc.procedures.DeliveryDistrict;
-- layout: warehouse
CREATE PROCEDURE PARTITION ON TABLE warehouse COLUMN w_id PARAMETER 0 FROM CLASS tpcc.procedures.StockLevel;
-- layout: district
CREATE PROCEDURE FROM CLASS tpcc.procedures.StockLevel;
-- The consistency check's reads of one warehouse, in one transaction (ConsistencyRead.java says why).
CREATE PROCEDURE FROM CLASS tpcc.procedures.ConsistencyRead;
-- Loading: one transaction per load unit, rows and done-marker together (ITEM, replicated, is
-- loaded by the driver with @LoadMultipartitionTable, then marked: VoltDBDriver._load_items).
-- layout: warehouse
CREATE PROCEDURE PARTITION ON TABLE warehouse COLUMN w_id PARAMETER 0 FROM CLASS tpcc.procedures.LoadWarehouse;
-- layout: district
CREATE PROCEDURE FROM CLASS tpcc.procedures.LoadWarehouse;
CREATE PROCEDURE PARTITION ON TABLE warehouse COLUMN w_id PARAMETER 0 FROM CLASS tpcc.procedures.LoadStock;
-- layout: warehouse
CREATE PROCEDURE PARTITION ON TABLE warehouse COLUMN w_id PARAMETER 0 FROM CLASS tpcc.procedures.LoadDistrict;
-- layout: district
CREATE PROCEDURE FROM CLASS tpcc.procedures.LoadDistrict;
