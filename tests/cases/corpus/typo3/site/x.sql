typo3: x.sql
