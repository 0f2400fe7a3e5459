aiowps-6g: backup.sql
