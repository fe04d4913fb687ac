`default_nettype none
// pe: one output-stationary processing element of the systolic array.
//
// Each enabled cycle it adds a_in * b_in (int8 x int8) to its int32 accumulator and passes
// a_in to the right neighbour and b_in to the one below, one cycle later.
module pe (
    input  wire        clk,
    input  wire        rst,
    input  wire        clear,    // zero the accumulator and the forwarding registers
    input  wire        en,       // one systolic beat

    input  wire [7:0]  a_in,     // int8 from the left
    input  wire [7:0]  b_in,     // int8 from above
    output reg  [7:0]  a_out,    // a_in, delayed one beat, to the right
    output reg  [7:0]  b_out,    // b_in, delayed one beat, downwards
    output reg  [31:0] acc       // sum of the products, int32
);

// the low 16 bits of the product of the sign-extended operands are the int8 x int8 product
wire [15:0] product = {{8{a_in[7]}}, a_in} * {{8{b_in[7]}}, b_in};

// one test of `active` in a cycle that changes nothing (on Icarus each tested signal costs)
wire active = rst || clear || en;

always @(posedge clk) begin
    if (active) begin
        if (rst || clear) begin
            a_out <= 8'd0;
            b_out <= 8'd0;
            acc   <= 32'd0;
        end else begin
            a_out <= a_in;
            b_out <= b_in;
            acc   <= acc + {{16{product[15]}}, product};
        end
    end
end

endmodule

`default_nettype wire
