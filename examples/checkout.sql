-- A small shop: customers browse items by category and place orders. Run it against any server with
--   versus script examples/checkout.sql --mysql-port=PORT --mysql-user=sbtest --mysql-password=sbpass prepare
--   versus script examples/checkout.sql --threads=4 --time=60 --mysql-port=PORT ... run
-- or in an experiment (examples/checkout.toml). The format is described in docs/workloads.md.

-- @setup
CREATE TABLE digits (d INT PRIMARY KEY);
INSERT INTO digits VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9);
CREATE TABLE items (
    id INT PRIMARY KEY,
    category INT NOT NULL,
    price DECIMAL(10, 2) NOT NULL,
    stock INT NOT NULL,
    KEY category (category)
);
INSERT INTO items
SELECT 1 + a.d + 10 * b.d + 100 * c.d + 1000 * e.d, (a.d + 10 * b.d) % 50, 1 + 7 * c.d + a.d, 1000
FROM digits a, digits b, digits c, digits e;
CREATE TABLE orders (id BIGINT AUTO_INCREMENT PRIMARY KEY, item INT NOT NULL, qty INT NOT NULL, KEY item (item));
-- Statistics into the snapshot, so that the optimizer sees the table as loaded.
ANALYZE TABLE items;

-- @transaction browse
-- @weight 8
\set cat random_zipfian(0, 49, 1.2)
SELECT id, price FROM items WHERE category = :cat ORDER BY price LIMIT 10;
\set id random(1, 10000)
SELECT price, stock FROM items WHERE id = :id;

-- @transaction checkout
-- @weight 2
\set id random_exponential(1, 10000, 5.0)
\set qty random(1, 3)
BEGIN;
SELECT stock FROM items WHERE id = :id FOR UPDATE;
UPDATE items SET stock = stock - :qty WHERE id = :id;
INSERT INTO orders (item, qty) VALUES (:id, :qty);
COMMIT;
