-- TPC-C schema for VoltDB (clause 1.3), applied by the runner's driver through @AdHoc.
-- Three layouts (driver option partitioning): "warehouse" (default) partitions every table but
-- ITEM on its warehouse id, so each transaction of a home warehouse runs in one partition;
-- "district" partitions the district-keyed tables (DISTRICT, CUSTOMER, HISTORY, ORDERS,
-- NEW-ORDER, ORDER-LINE) on a district key *_wd = W_ID * 10 + D_ID (VoltDB partitions on one
-- column), WAREHOUSE and STOCK staying on their warehouse id; ITEM is replicated in both.
-- "d_id" is the VoltDB study's District ID strategy (its section 5.1): "For the District ID
-- partition key, the Warehouse table and the District table are replicated across all
-- partitions. If a table has a column associated with the District ID in the table, it is
-- partitioned on that column. If a table does not have a column associated with the District
-- ID, it is partitioned on a column associated with the Item ID." So WAREHOUSE and DISTRICT
-- are replicated, CUSTOMER, HISTORY (its home district h_d_id), ORDERS, NEW-ORDER and
-- ORDER-LINE are partitioned on their D_ID column (values 1..10: at most ten partitions hold
-- rows), ITEM and STOCK on their item id ("Both the Item table and the Stock table are
-- partitioned on the columns associated with the Item ID").
-- The *_wd columns exist in both layouts (VoltDB plans every statement of a procedure when it
-- is created, so the procedures' SQL is one), ending each primary key they are in (a
-- partitioned table's unique keys must hold its partition column); every writer sets them.
-- A statement after a line "-- layout: X [Y ...]" belongs to the layouts named there only.
-- Money is DECIMAL (exact; the procedures round computed amounts to cents with BigDecimal);
-- tax and discount rates stay FLOAT (they only scale the returned NewOrder total). Timestamps are UTC.
-- One statement per entry, separated by ';' at line end: the driver creates only the
-- tables and procedures that are missing.

CREATE TABLE warehouse (
  w_id INTEGER NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), w_street_2 VARCHAR(20),
  w_city VARCHAR(20), w_state VARCHAR(2), w_zip VARCHAR(9), w_tax FLOAT, w_ytd DECIMAL,
  PRIMARY KEY (w_id));
-- layout: warehouse district
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
-- layout: d_id
PARTITION TABLE customer ON COLUMN c_d_id;
CREATE INDEX customer_by_name ON customer (c_w_id, c_d_id, c_last, c_first);

-- No primary key (clause 1.3.1); partitioned on the paying (home) warehouse (or district, or
-- D_ID: h_d_id is NOT NULL, as a partition column must be; every writer sets it), which is
-- where Payment writes it. The index serves the per-customer sums of the consistency checks
-- and the delete that makes reloading a district idempotent.
CREATE TABLE history (
  h_c_id INTEGER, h_c_d_id INTEGER, h_c_w_id INTEGER, h_d_id INTEGER NOT NULL, h_w_id INTEGER NOT NULL,
  h_date TIMESTAMP, h_amount DECIMAL, h_data VARCHAR(24), h_wd INTEGER NOT NULL);
-- layout: warehouse
PARTITION TABLE history ON COLUMN h_w_id;
-- layout: district
PARTITION TABLE history ON COLUMN h_wd;
-- layout: d_id
PARTITION TABLE history ON COLUMN h_d_id;
CREATE INDEX history_by_customer ON history (h_c_w_id, h_c_d_id, h_c_id);

CREATE TABLE new_order (
  no_o_id INTEGER NOT NULL, no_d_id INTEGER NOT NULL, no_w_id INTEGER NOT NULL, no_wd INTEGER NOT NULL,
  PRIMARY KEY (no_w_id, no_d_id, no_o_id, no_wd));
-- layout: warehouse
PARTITION TABLE new_order ON COLUMN no_w_id;
-- layout: district
PARTITION TABLE new_order ON COLUMN no_wd;
-- layout: d_id
PARTITION TABLE new_order ON COLUMN no_d_id;

CREATE TABLE orders (
  o_id INTEGER NOT NULL, o_d_id INTEGER NOT NULL, o_w_id INTEGER NOT NULL, o_c_id INTEGER,
  o_entry_d TIMESTAMP, o_carrier_id INTEGER, o_ol_cnt INTEGER, o_all_local INTEGER, o_wd INTEGER NOT NULL,
  PRIMARY KEY (o_w_id, o_d_id, o_id, o_wd));
-- layout: warehouse
PARTITION TABLE orders ON COLUMN o_w_id;
-- layout: district
PARTITION TABLE orders ON COLUMN o_wd;
-- layout: d_id
PARTITION TABLE orders ON COLUMN o_d_id;
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
-- layout: d_id
PARTITION TABLE order_line ON COLUMN ol_d_id;

CREATE TABLE item (
  i_id INTEGER NOT NULL, i_im_id INTEGER, i_name VARCHAR(24), i_price DECIMAL, i_data VARCHAR(50),
  PRIMARY KEY (i_id));
-- layout: d_id
PARTITION TABLE item ON COLUMN i_id;

CREATE TABLE stock (
  s_i_id INTEGER NOT NULL, s_w_id INTEGER NOT NULL, s_quantity INTEGER,
  s_dist_01 VARCHAR(24), s_dist_02 VARCHAR(24), s_dist_03 VARCHAR(24), s_dist_04 VARCHAR(24),
  s_dist_05 VARCHAR(24), s_dist_06 VARCHAR(24), s_dist_07 VARCHAR(24), s_dist_08 VARCHAR(24),
  s_dist_09 VARCHAR(24), s_dist_10 VARCHAR(24), s_ytd INTEGER, s_order_cnt INTEGER,
  s_remote_cnt INTEGER, s_data VARCHAR(50),
  PRIMARY KEY (s_w_id, s_i_id));
-- layout: warehouse district
PARTITION TABLE stock ON COLUMN s_w_id;
-- layout: d_id
PARTITION TABLE stock ON COLUMN s_i_id;

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
-- D_ID layout (the study's section 5.1 says which are single-partition there): OrderStatus
-- and DeliveryDistrict are single-partition on D_ID (their first parameter): "The Order Status
-- transaction is guaranteed to be a one shot transaction because it does not involve multiple
-- District IDs, the Stock table, the Item table, updating the Warehouse table, or updating the
-- District table", and of the per-district Delivery (section 5.2) "the modified Delivery
-- transaction is guaranteed to be a single partition transaction". Everything else is
-- multi-partition: NewOrder updates D_NEXT_O_ID and Payment W_YTD and D_YTD, rows of replicated
-- tables, which only a multi-partition transaction may write ("any update to those tables must
-- be coordinated with every partition"); NewOrder's and StockLevel's STOCK and ITEM rows are
-- partitioned on the item id; the whole-warehouse Delivery "uses ten different District IDs";
-- the load units write replicated rows (warehouse), rows of many item ids (stock) or a
-- district's rows with the warehouse's load marker (district).
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
-- layout: d_id
CREATE PROCEDURE PARTITION ON TABLE customer COLUMN c_d_id PARAMETER 0 FROM CLASS tpcc.procedures.OrderStatus;
-- layout: warehouse
CREATE PROCEDURE PARTITION ON TABLE warehouse COLUMN w_id PARAMETER 0 FROM CLASS tpcc.procedures.Delivery;
-- layout: district d_id
CREATE PROCEDURE FROM CLASS tpcc.procedures.Delivery;
-- Delivery one district per transaction (driver option delivery=per-district).
-- layout: warehouse
CREATE PROCEDURE PARTITION ON TABLE warehouse COLUMN w_id PARAMETER 0 FROM CLASS tpcc.procedures.DeliveryDistrict;
-- layout: district
CREATE PROCEDURE PARTITION ON TABLE new_order COLUMN no_wd PARAMETER 0 FROM CLASS tpcc.procedures.DeliveryDistrict;
-- layout: d_id
CREATE PROCEDURE PARTITION ON TABLE new_order COLUMN no_d_id PARAMETER 0 FROM CLASS tpcc.procedures.DeliveryDistrict;
-- layout: warehouse
CREATE PROCEDURE PARTITION ON TABLE warehouse COLUMN w_id PARAMETER 0 FROM CLASS tpcc.procedures.StockLevel;
-- layout: district d_id
CREATE PROCEDURE FROM CLASS tpcc.procedures.StockLevel;
-- The consistency check's reads of one warehouse, in one transaction (ConsistencyRead.java says why).
CREATE PROCEDURE FROM CLASS tpcc.procedures.ConsistencyRead;
-- Loading: one transaction per load unit, rows and done-marker together (ITEM, replicated, is
-- loaded by the driver with @LoadMultipartitionTable, then marked: VoltDBDriver._load_items;
-- partitioned on D_ID, ITEM is partitioned on i_id and LoadItemRows loads a unit).
-- layout: warehouse
CREATE PROCEDURE PARTITION ON TABLE warehouse COLUMN w_id PARAMETER 0 FROM CLASS tpcc.procedures.LoadWarehouse;
-- layout: district d_id
CREATE PROCEDURE FROM CLASS tpcc.procedures.LoadWarehouse;
-- layout: warehouse district
CREATE PROCEDURE PARTITION ON TABLE warehouse COLUMN w_id PARAMETER 0 FROM CLASS tpcc.procedures.LoadStock;
-- layout: d_id
CREATE PROCEDURE FROM CLASS tpcc.procedures.LoadStock;
-- layout: warehouse
CREATE PROCEDURE PARTITION ON TABLE warehouse COLUMN w_id PARAMETER 0 FROM CLASS tpcc.procedures.LoadDistrict;
-- layout: district d_id
CREATE PROCEDURE FROM CLASS tpcc.procedures.LoadDistrict;
-- layout: d_id
CREATE PROCEDURE FROM CLASS tpcc.procedures.LoadItemRows;
