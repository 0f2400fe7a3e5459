blog front
