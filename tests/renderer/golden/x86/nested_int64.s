; fusegrad x86-64 kernel nested_int64
nested_int64:
     0: 53                             push rbx
     1: 55                             push rbp
     2: 4154                           push r12
     4: 4883ec20                       sub rsp, 0x20
     8: 48893c24                       mov qword ptr [rsp], rdi
     c: 4889742408                     mov qword ptr [rsp + 8], rsi
    11: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    16: 488b3424                       mov rsi, qword ptr [rsp]
    1a: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    1f: 4c8b442410                     mov r8, qword ptr [rsp + 0x10]
    24: 41b900000000                   mov r9d, 0
.Lloop1:
    2a: 4983f903                       cmp r9, 3
    2e: 0f8d4a000000                   jge .Lexit2
    34: bb00000000                     mov ebx, 0
.Lloop3:
    39: 4883fb04                       cmp rbx, 4
    3d: 0f8d32000000                   jge .Lexit4
    43: 4c89cd                         mov rbp, r9
    46: 49c7c404000000                 mov r12, 4
    4d: 490fafec                       imul rbp, r12
    51: 4889ed                         mov rbp, rbp
    54: 4801dd                         add rbp, rbx
    57: c4a17b1004ce                   vmovsd xmm0, qword ptr [rsi + r9*8]
    5d: c5fb100cdf                     vmovsd xmm1, qword ptr [rdi + rbx*8]
    62: c5fb59c1                       vmulsd xmm0, xmm0, xmm1
    66: c4c17b1104e8                   vmovsd qword ptr [r8 + rbp*8], xmm0
    6c: 4883c301                       add rbx, 1
    70: e9c4ffffff                     jmp .Lloop3
.Lexit4:
    75: 4983c101                       add r9, 1
    79: e9acffffff                     jmp .Lloop1
.Lexit2:
    7e: 4883c420                       add rsp, 0x20
    82: 415c                           pop r12
    84: 5d                             pop rbp
    85: 5b                             pop rbx
    86: c3                             ret
