cron
