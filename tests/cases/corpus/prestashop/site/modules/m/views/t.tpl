prestashop: modules/m/views/t.tpl
