"""The side-by-side benchmark: hopper (memory, PostgreSQL) against moto. See README.md."""
