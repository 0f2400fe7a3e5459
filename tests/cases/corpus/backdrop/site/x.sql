backdrop: x.sql
