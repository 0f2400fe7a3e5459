tpl
