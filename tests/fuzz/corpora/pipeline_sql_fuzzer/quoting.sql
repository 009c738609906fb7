CREATE TEMP VIEW v AS SELECT ';', "a;b", $$;$$, $t$ x $t$, E'\';' /* ; /* n */ */ -- ;
 FROM t;
