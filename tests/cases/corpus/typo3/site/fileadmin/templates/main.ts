typo3: fileadmin/templates/main.ts
