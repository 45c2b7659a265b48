; fusegrad x86-64 kernel nested_int64
nested_int64:
     0: 53                             push rbx
     1: 55                             push rbp
     2: 4881ecb8000000                 sub rsp, 0xb8
     9: 48893c24                       mov qword ptr [rsp], rdi
     d: 4889742408                     mov qword ptr [rsp + 8], rsi
    12: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    17: 488b3424                       mov rsi, qword ptr [rsp]
    1b: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    20: 4c8b442410                     mov r8, qword ptr [rsp + 0x10]
    25: 41b900000000                   mov r9d, 0
.Lloop1:
    2b: 4983f903                       cmp r9, 3
    2f: 0f8d3f000000                   jge .Lexit2
    35: bb00000000                     mov ebx, 0
.Lloop3:
    3a: 4883fb04                       cmp rbx, 4
    3e: 0f8d27000000                   jge .Lexit4
    44: 496be904                       imul rbp, r9, 4
    48: 488d6c1d00                     lea rbp, [rbp + rbx]
    4d: c4a17b1004ce                   vmovsd xmm0, qword ptr [rsi + r9*8]
    53: c5fb100cdf                     vmovsd xmm1, qword ptr [rdi + rbx*8]
    58: c5fb59c1                       vmulsd xmm0, xmm0, xmm1
    5c: c4c17b1104e8                   vmovsd qword ptr [r8 + rbp*8], xmm0
    62: 4883c301                       add rbx, 1
    66: e9cfffffff                     jmp .Lloop3
.Lexit4:
    6b: 4983c101                       add r9, 1
    6f: e9b7ffffff                     jmp .Lloop1
.Lexit2:
    74: c5f877                         vzeroupper
    77: 4881c4b8000000                 add rsp, 0xb8
    7e: 5d                             pop rbp
    7f: 5b                             pop rbx
    80: c3                             ret
