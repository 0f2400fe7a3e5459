aiowps-classic: backup.sql
