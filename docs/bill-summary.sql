-- The bill summary: a FOCUS table summed, where it lives, to what the workbench's review needs
-- (docs/bill-summary.md). Portable SQL, run as it is by DuckDB in the tests (tests/test_bill_engine.py);
-- the BigQuery and Athena renditions in docs/bill-summary.md differ only in how Tags become JSON text.
-- ${FOCUS_TABLE}: the FOCUS table or view (replace it with the table's name).
-- Run it in UTC (DuckDB: SET TimeZone = 'UTC'): a day is a UTC day, as FOCUS's dates are; in another time zone a
-- timestamp with a zone falls on the local day, and spend near midnight moves to the day (and month) before.
-- A table without ConsumedUnit or ResourceId (both optional in FOCUS): add them as '' AS ConsumedUnit, ...
SELECT
    CAST(CAST(ChargePeriodStart AS DATE) AS TIMESTAMP) AS ChargePeriodStart,
    MAX(ChargePeriodEnd) AS ChargePeriodEnd,
    BillingCurrency,
    ServiceCategory,
    ServiceName,
    ChargeCategory,
    ProviderName,
    ConsumedUnit,
    Tags,
    -- kept only for usage billed with nothing consumed (an idle volume, an instance kept but unused)
    CASE WHEN ChargeCategory = 'Usage' AND EffectiveCost > 0 AND ConsumedQuantity = 0 THEN ResourceId END AS ResourceId,
    SUM(EffectiveCost) AS EffectiveCost,
    SUM(BilledCost) AS BilledCost,
    SUM(ConsumedQuantity) AS ConsumedQuantity,
    COUNT(*) AS x_RowCount
FROM ${FOCUS_TABLE}
GROUP BY
    CAST(CAST(ChargePeriodStart AS DATE) AS TIMESTAMP), BillingCurrency, ServiceCategory, ServiceName, ChargeCategory,
    ProviderName, ConsumedUnit, Tags,
    CASE WHEN ChargeCategory = 'Usage' AND EffectiveCost > 0 AND ConsumedQuantity = 0 THEN ResourceId END,
    -- idle usage, metered usage and the rest summed apart, as the review tells them apart
    CASE WHEN ChargeCategory = 'Usage' AND EffectiveCost > 0 AND ConsumedQuantity = 0 THEN 'idle'
         WHEN ChargeCategory = 'Usage' AND ConsumedQuantity > 0 AND ConsumedUnit <> '' THEN 'metered' ELSE '' END
