sh
