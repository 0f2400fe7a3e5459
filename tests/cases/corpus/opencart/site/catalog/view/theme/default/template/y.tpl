opencart: catalog/view/theme/default/template/y.tpl
