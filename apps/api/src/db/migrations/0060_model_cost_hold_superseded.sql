-- A model cost hold taken for a call its creator sponsors (a free trial, promotional credit:
-- docs/decisions/080) and released at once because the creator's wallet could not pay the price:
-- the caller then pays for the call themselves, under the same call id. `superseded_at` says so, so
-- the reconcile does not read that call's model cost as this hold's (decision 062's check).
ALTER TABLE model_cost_holds ADD COLUMN superseded_at timestamptz;
