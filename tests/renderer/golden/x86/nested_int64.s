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
    2f: 0f8d3d000000                   jge .Lexit2
    35: bb00000000                     mov ebx, 0
.Lloop3:
    3a: 4883fb04                       cmp rbx, 4
    3e: 0f8d25000000                   jge .Lexit4
    44: 496be904                       imul rbp, r9, 4
    48: 4801dd                         add rbp, rbx
    4b: c4a17b1004ce                   vmovsd xmm0, qword ptr [rsi + r9*8]
    51: c5fb100cdf                     vmovsd xmm1, qword ptr [rdi + rbx*8]
    56: c5fb59c1                       vmulsd xmm0, xmm0, xmm1
    5a: c4c17b1104e8                   vmovsd qword ptr [r8 + rbp*8], xmm0
    60: 4883c301                       add rbx, 1
    64: e9d1ffffff                     jmp .Lloop3
.Lexit4:
    69: 4983c101                       add r9, 1
    6d: e9b9ffffff                     jmp .Lloop1
.Lexit2:
    72: c5f877                         vzeroupper
    75: 4881c4b8000000                 add rsp, 0xb8
    7c: 5d                             pop rbp
    7d: 5b                             pop rbx
    7e: c3                             ret
