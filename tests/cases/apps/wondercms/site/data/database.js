{"config":{}}
