//! The five TPC-C transactions (§2.4–§2.8) as PL/pgSQL functions, created by the `t`
//! step. The client draws every input (pgrush's builtin `tpcc-*` scripts) and calls one
//! function per transaction; New-Order returns 0 at an unused item id and the script
//! then rolls the transaction back (§2.4.2.3).

/// `d`: drops the functions (the tables are dropped by [`super::ddl::DROP_TABLES`]).
pub const DROP_FUNCTIONS: &str = "drop function if exists tpcc_new_order, tpcc_payment, tpcc_order_status, tpcc_delivery, tpcc_stock_level, tpcc_customer_by_name, tpcc_last_name";

/// `t`: the functions, helpers first.
pub const CREATE_FUNCTIONS: [&str; 7] = [
    // C_LAST of a number 0..999: its three digits' syllables (§4.3.2.3).
    "create function tpcc_last_name(n int) returns text language sql immutable parallel safe as $$
select s[n / 100 + 1] || s[n / 10 % 10 + 1] || s[n % 10 + 1]
from (select array['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'] as s) t
$$",
    // The customer chosen by last name: of those with the name, ordered by c_first, the
    // one at position ceil(n/2) (§2.5.2.2, §2.6.2.2).
    "create function tpcc_customer_by_name(p_w int, p_d int, p_last int) returns int language sql stable as $$
select ids[(cardinality(ids) + 1) / 2]
from (select array_agg(c_id order by c_first) as ids from customer
      where c_w_id = p_w and c_d_id = p_d and c_last = tpcc_last_name(p_last)) t
$$",
    // New-Order (§2.4.2.2): returns 1, or 0 when an item id is not used (the caller
    // then rolls back). Stock rows are locked first in key order, so that concurrent
    // orders never wait for each other in a circle.
    "create function tpcc_new_order(p_w int, p_d int, p_c int, p_ol_cnt int, p_rbk int, p_items int[], p_supply int[], p_qty int[]) returns int language plpgsql as $$
declare
  v_w_tax numeric; v_d_tax numeric; v_o_id int; v_discount numeric; v_last text; v_credit text;
  v_item int; v_price numeric; v_i_data text; v_s_data text; v_dist text; v_amount numeric;
  v_total numeric := 0;
begin
  select w_tax into v_w_tax from warehouse where w_id = p_w;
  update district set d_next_o_id = d_next_o_id + 1 where d_w_id = p_w and d_id = p_d
    returning d_tax, d_next_o_id - 1 into v_d_tax, v_o_id;
  select c_discount, c_last, c_credit into v_discount, v_last, v_credit
    from customer where c_w_id = p_w and c_d_id = p_d and c_id = p_c;
  insert into orders values (v_o_id, p_d, p_w, p_c, localtimestamp, null, p_ol_cnt,
    case when p_supply[1:p_ol_cnt] <@ array[p_w] then 1 else 0 end);
  insert into new_order values (v_o_id, p_d, p_w);
  perform 1 from stock where (s_w_id, s_i_id) in
    (select p_supply[k], p_items[k] from generate_series(1, p_ol_cnt) k)
    order by s_w_id, s_i_id for update;
  for i in 1 .. p_ol_cnt loop
    v_item := case when p_rbk = 1 and i = p_ol_cnt then 100001 else p_items[i] end;
    select i_price, i_data into v_price, v_i_data from item where i_id = v_item;
    if not found then
      return 0;
    end if;
    update stock set
      s_quantity = case when s_quantity - p_qty[i] >= 10 then s_quantity - p_qty[i] else s_quantity - p_qty[i] + 91 end,
      s_ytd = s_ytd + p_qty[i], s_order_cnt = s_order_cnt + 1,
      s_remote_cnt = s_remote_cnt + case when p_supply[i] <> p_w then 1 else 0 end
    where s_w_id = p_supply[i] and s_i_id = v_item
    returning s_data, case p_d when 1 then s_dist_01 when 2 then s_dist_02 when 3 then s_dist_03
      when 4 then s_dist_04 when 5 then s_dist_05 when 6 then s_dist_06 when 7 then s_dist_07
      when 8 then s_dist_08 when 9 then s_dist_09 else s_dist_10 end into v_s_data, v_dist;
    v_amount := p_qty[i] * v_price;
    v_total := v_total + v_amount;
    insert into order_line values (v_o_id, p_d, p_w, i, v_item, p_supply[i], null, p_qty[i], v_amount, v_dist);
  end loop;
  return 1;
end
$$",
    // Payment (§2.5.2.2): returns the customer's id.
    "create function tpcc_payment(p_w int, p_d int, p_c_w int, p_c_d int, p_c int, p_last int, p_by_name boolean, p_cents int) returns int language plpgsql as $$
declare
  v_amount numeric := p_cents / 100.0; v_w_name text; v_d_name text; v_c int := p_c;
begin
  update warehouse set w_ytd = w_ytd + v_amount where w_id = p_w returning w_name into v_w_name;
  update district set d_ytd = d_ytd + v_amount where d_w_id = p_w and d_id = p_d returning d_name into v_d_name;
  if p_by_name then
    v_c := tpcc_customer_by_name(p_c_w, p_c_d, p_last);
  end if;
  update customer set c_balance = c_balance - v_amount, c_ytd_payment = c_ytd_payment + v_amount,
    c_payment_cnt = c_payment_cnt + 1,
    c_data = case when c_credit = 'BC'
      then left(format('%s %s %s %s %s %s | ', c_id, c_d_id, c_w_id, p_d, p_w, v_amount) || c_data, 500)
      else c_data end
  where c_w_id = p_c_w and c_d_id = p_c_d and c_id = v_c;
  insert into history values (v_c, p_c_d, p_c_w, p_d, p_w, localtimestamp, v_amount, v_w_name || '    ' || v_d_name);
  return v_c;
end
$$",
    // Order-Status (§2.6.2.2, read-only): returns the number of lines of the
    // customer's last order.
    "create function tpcc_order_status(p_w int, p_d int, p_c int, p_last int, p_by_name boolean) returns int language plpgsql stable as $$
declare
  v_c int := p_c; v_balance numeric; v_o_id int; v_lines int;
begin
  if p_by_name then
    v_c := tpcc_customer_by_name(p_w, p_d, p_last);
  end if;
  select c_balance into v_balance from customer where c_w_id = p_w and c_d_id = p_d and c_id = v_c;
  select o_id into v_o_id from orders where o_w_id = p_w and o_d_id = p_d and o_c_id = v_c order by o_id desc limit 1;
  select count(*) into v_lines from (select ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
    from order_line where ol_w_id = p_w and ol_d_id = p_d and ol_o_id = v_o_id) l;
  return v_lines;
end
$$",
    // Delivery (§2.7.4.2): the ten districts in one transaction; a district without an
    // undelivered order (or whose oldest one another Delivery took) is skipped. Returns
    // the number of districts delivered.
    "create function tpcc_delivery(p_w int, p_carrier int) returns int language plpgsql as $$
declare
  v_o int; v_c int; v_sum numeric; v_done int := 0;
begin
  for v_d in 1 .. 10 loop
    delete from new_order where no_w_id = p_w and no_d_id = v_d and no_o_id =
      (select min(no_o_id) from new_order where no_w_id = p_w and no_d_id = v_d)
      returning no_o_id into v_o;
    if not found then
      continue;
    end if;
    update orders set o_carrier_id = p_carrier where o_w_id = p_w and o_d_id = v_d and o_id = v_o
      returning o_c_id into v_c;
    with l as (update order_line set ol_delivery_d = localtimestamp
               where ol_w_id = p_w and ol_d_id = v_d and ol_o_id = v_o returning ol_amount)
    select coalesce(sum(ol_amount), 0) into v_sum from l;
    update customer set c_balance = c_balance + v_sum, c_delivery_cnt = c_delivery_cnt + 1
      where c_w_id = p_w and c_d_id = v_d and c_id = v_c;
    v_done := v_done + 1;
  end loop;
  return v_done;
end
$$",
    // Stock-Level (§2.8.2.2, read-only): distinct items of the district's last 20 orders
    // with a stock below the threshold. The next order id is read first, as the
    // specification's profile does: the count then has its order-id range as
    // parameters, so even a generic plan scans the order lines' key for 20 orders (one
    // statement joining the district left the range to a join, and the generic plan of a
    // SQL function joined the warehouse's whole order lines: 40 times slower).
    "create function tpcc_stock_level(p_w int, p_d int, p_threshold int) returns int language plpgsql stable as $$
declare
  v_next int;
  v_count int;
begin
  select d_next_o_id into v_next from district where d_w_id = p_w and d_id = p_d;
  select count(distinct s_i_id)::int into v_count from order_line, stock
  where ol_w_id = p_w and ol_d_id = p_d and ol_o_id < v_next and ol_o_id >= v_next - 20
    and s_w_id = p_w and s_i_id = ol_i_id and s_quantity < p_threshold;
  return v_count;
end
$$",
];
