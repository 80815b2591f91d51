-- Money never stays in a wallet beside its owner's debt (docs/decisions/028, amended for issue 30):
-- a wallet that does (a lease released after a chargeback, a reversal beside other top-ups,
-- before this change) pays the debt now, as a top-up would: one `reversal` per owner, referenced
-- `debt:upgrade-0039:<owner>`, what the wallet holds up to what is owed.
WITH pairs AS (
  SELECT w.id AS wallet, d.id AS debt, w.owner_id, LEAST(w.balance_micros, -d.balance_micros) AS amount
  FROM ledger_accounts w
  JOIN ledger_accounts d ON d.kind = 'debt' AND d.owner_id = w.owner_id
  WHERE w.kind = 'wallet' AND w.balance_micros > 0 AND d.balance_micros < 0
  FOR UPDATE OF w, d
), posted AS (
  INSERT INTO ledger_transactions (kind, reference, description)
  SELECT 'reversal', 'debt:upgrade-0039:' || owner_id, 'Debt settled from your wallet' FROM pairs
  RETURNING id, reference
), entries AS (
  INSERT INTO ledger_entries (transaction_id, account_id, amount_micros)
  SELECT posted.id, m.account_id, m.delta
  FROM pairs
  JOIN posted ON posted.reference = 'debt:upgrade-0039:' || pairs.owner_id
  CROSS JOIN LATERAL (VALUES (pairs.wallet, -pairs.amount), (pairs.debt, pairs.amount)) AS m(account_id, delta)
  RETURNING 1
)
UPDATE ledger_accounts a SET balance_micros = a.balance_micros + m.delta
FROM (SELECT wallet AS id, -amount AS delta FROM pairs UNION ALL SELECT debt, amount FROM pairs) m
WHERE a.id = m.id;
