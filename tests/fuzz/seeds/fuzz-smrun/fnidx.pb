Ô
"serveã
.
xPlaceholder*
dtype0*
shape:
C
callPartitionedCallx*

fR
f*
Tin
2*
Tout
2l
j

f
a
z
mIdentitya*
T0,
addAddV2m:z:0m:z:-100000000*
T0"
zadd:z:0*c
serving_defaultP

x
x:0
y
call:0ÿÿÿÿÿÿÿÿÿtensorflow/serving/predict